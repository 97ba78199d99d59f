// Test bundle for tests/js/test_drive_backup.py: entry.js plus the Drive and backup modules.
import './entry.js';
import * as drive from '../../custom_components/wallet_js/drive.js';
import * as backup from '../../custom_components/wallet_js/backup.js';

window.nb.drive = drive;
window.nb.backup = backup;
