"""wallet_app.reflex_run's frontend build cache (FRONTEND_BUILD_CACHE): a build is reused only for
the same inputs, and is stored whole or not at all."""

from pathlib import Path

import pytest

from wallet_app.reflex_run import build_inputs_digest, cached_build


def web_folder(root: Path, env: str = '{"EVENT": "ws://localhost:3000/_event"}') -> Path:
    web = root / "web"
    for name, text in {
        "env.json": env,
        "app/routes/home.jsx": "export default () => null;",
        "package.json": '{"name": "wallet"}',
        "node_modules/react/index.js": "module.exports = 1;",
        "reflex.json": '{"last_reflex_run_datetime": "2026-11-27 04:05:35"}',
    }.items():
        (web / name).parent.mkdir(parents=True, exist_ok=True)
        (web / name).write_text(text)
    return web


class Builds:
    """A stand-in for Reflex's build(): writes build/client from env.json, and counts its runs."""

    def __init__(self) -> None:
        self.web: Path | None = None
        self.runs = 0

    def build(self) -> None:
        assert self.web is not None
        self.runs += 1
        client = self.web / "build" / "client"
        client.mkdir(parents=True)
        (client / "reflex-env.js").write_text((self.web / "env.json").read_text())


@pytest.mark.parametrize(
    ("change", "same"),
    [
        (lambda web: (web / "reflex.json").write_text('{"last_reflex_run_datetime": "later"}'), True),
        (lambda web: (web / "node_modules/react/index.js").write_text("module.exports = 2;"), True),
        (lambda web: (web / "build/client").mkdir(parents=True), True),
        (lambda web: (web / ".react-router/types/root.ts").parent.mkdir(parents=True), True),
        (lambda web: (web / "env.json").write_text('{"EVENT": "ws://localhost:3001/_event"}'), False),
        (lambda web: (web / "app/routes/home.jsx").rename(web / "app/routes/home2.jsx"), False),
        (lambda web: (web / "public/sw.js").parent.mkdir() or (web / "public/sw.js").write_text(""), False),
    ],
)
def test_the_digest_follows_the_inputs_only(tmp_path, change, same):
    web = web_folder(tmp_path)
    before = build_inputs_digest(web)
    change(web)
    assert (build_inputs_digest(web) == before) is same


def test_a_build_is_reused_for_the_same_inputs_only(tmp_path):
    builds, cache = Builds(), tmp_path / "cache"
    build = cached_build(builds.build, lambda: builds.web, cache)  # type: ignore[arg-type, return-value]

    builds.web = web_folder(tmp_path / "first")
    build()
    builds.web = web_folder(tmp_path / "second")
    (builds.web / "build" / "old").mkdir(parents=True)  # a previous build's output goes
    build()
    assert builds.runs == 1
    assert sorted(p.name for p in (builds.web / "build").iterdir()) == ["client"]
    assert (builds.web / "build/client/reflex-env.js").read_text() == '{"EVENT": "ws://localhost:3000/_event"}'

    builds.web = web_folder(tmp_path / "third", env='{"EVENT": "ws://localhost:3001/_event"}')
    build()
    assert builds.runs == 2
    assert (builds.web / "build/client/reflex-env.js").read_text() == '{"EVENT": "ws://localhost:3001/_event"}'
    assert len(list(cache.iterdir())) == 2


def test_a_build_stored_first_by_another_server_is_kept(tmp_path):
    builds, cache = Builds(), tmp_path / "cache"
    builds.web = web_folder(tmp_path / "first")
    theirs = cache / build_inputs_digest(builds.web)
    (theirs / "client").mkdir(parents=True)
    (theirs / "client" / "reflex-env.js").write_text("theirs")

    real_is_dir = Path.is_dir
    checked: list[Path] = []

    def not_yet_stored(path: Path) -> bool:  # the other server stores its build while this one builds
        if path == theirs and not checked:
            checked.append(path)
            return False
        return real_is_dir(path)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Path, "is_dir", not_yet_stored)
        cached_build(builds.build, lambda: builds.web, cache)()  # type: ignore[arg-type, return-value]
    assert builds.runs == 1
    assert (theirs / "client" / "reflex-env.js").read_text() == "theirs"
    assert [p.name for p in cache.iterdir()] == [theirs.name]  # no partial copy left
