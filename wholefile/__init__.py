"""Files written whole or not at all: the one way ruscope replaces a file on disk.

`write_whole(path, content, *, private=False, fsync=False, fsync_dir=False)` writes `content` (bytes, or a
callable that writes to the open binary file) to a hidden temp file beside `path` (`temp_path`) and renames
it over `path`: a reader, or the next run after a crash, finds the old file or the new one, never a part.
A failure removes the temp file and raises the exception as it came, for the caller to put in its own
words (a one-line CLI error, the emulator's `SaveFailed`). `private` makes the file 0600; `fsync` and
`fsync_dir` make the new file, and then its rename, survive a power cut.

Its users: the CLI's reports and CSV exports, the collectors' document samples, the store's set-aside
damaged lines, the emulator's snapshot, metrics history and certificates. It imports no other ruscope
package, so every package may stand on it (`fsync_directory` for a rename or a copy made by hand). What belongs here is writing a file whole; appending (the
emulator's journal, the store's pending segments) stays with the package that owns the file.
"""

from wholefile.replace import Writer, fsync_directory, temp_path, write_whole

__all__ = ["Writer", "fsync_directory", "temp_path", "write_whole"]
