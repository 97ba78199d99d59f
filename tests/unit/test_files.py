"""wallet_app/core/files.write_if_changed: the write every build of the machine may do at once."""

import os

from wallet_app.core.files import write_if_changed


def test_writes_new_and_changed_files_whole_and_leaves_equal_ones_alone(tmp_path):
    path = tmp_path / "a" / "b" / "module.js"
    write_if_changed(path, b"one")
    assert path.read_bytes() == b"one"
    assert oct(path.stat().st_mode & 0o777) == "0o644"
    os.utime(path, ns=(1, 1))
    write_if_changed(path, b"one")
    assert path.stat().st_mtime_ns == 1  # unchanged: not rewritten, so no copier sees it newer
    inode = path.stat().st_ino
    write_if_changed(path, b"two")
    assert path.read_bytes() == b"two"
    assert path.stat().st_ino != inode  # a new file renamed over the old one, never rewritten in place
    assert sorted(p.name for p in path.parent.iterdir()) == ["module.js"]  # no temporary left
