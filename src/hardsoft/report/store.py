"""The results store: one SQLite file under the run folder, one row per experiment.

A row is *current* when everything that determines its result matches the request: the
experiment version, the mode (quick/full), the package version, the seed and the device.
``hardsoft reproduce`` skips current experiments, so an interrupted run resumes where it
stopped, and a run with another ``--seed`` or ``--device`` recomputes (and replaces) the
record. SQLite commits are atomic: a crash never leaves a half-written record.

:func:`store_lock` makes one ``hardsoft reproduce`` at a time own a run folder (an exclusive
``fcntl.flock`` on ``DIR/.reproduce.lock``): a second run into the same folder is refused with
a clear message instead of duplicating the work.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hardsoft.errors import HardsoftError

LOCK_NAME = ".reproduce.lock"


@contextlib.contextmanager
def store_lock(folder: Path) -> Iterator[None]:
    """Hold the run folder's lock for the duration of the block (released on any exit, also
    when the process dies: the kernel drops flock locks with the file descriptor)."""
    folder = Path(folder)
    path = folder / LOCK_NAME
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as exc:
        raise HardsoftError(f"cannot lock the run folder {str(folder)!r}: {exc.strerror}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
            raise HardsoftError(
                f"another hardsoft reproduce (pid {holder}) is running into {str(folder)!r}; "
                "wait for it to finish or use another --out"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode("ascii"), 0)
        yield
    finally:
        os.close(fd)


SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    name TEXT NOT NULL,
    mode TEXT NOT NULL,
    version TEXT NOT NULL,
    package_version TEXT NOT NULL,
    created_at TEXT NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (name, mode)
)
"""


class ResultStore:
    """Read and write experiment records in ``DIR/results.sqlite``."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._con = sqlite3.connect(self.path)
            self._con.execute(SCHEMA)
            self._con.commit()
        except (sqlite3.DatabaseError, OSError) as exc:
            raise HardsoftError(
                f"cannot open the results store {str(self.path)!r}: {exc}"
            ) from None

    def close(self) -> None:
        self._con.close()

    def get(self, name: str, mode: str) -> dict[str, Any] | None:
        row = self._con.execute(
            "SELECT record FROM results WHERE name = ? AND mode = ?", (name, mode)
        ).fetchone()
        return json.loads(row[0]) if row else None

    def is_current(
        self,
        name: str,
        mode: str,
        version: str,
        package_version: str,
        seed: int | None = None,
        device: str | None = None,
    ) -> bool:
        """Whether the stored record of ``(name, mode)`` was made by this experiment version
        and package version with this seed and device (None: not compared)."""
        row = self._con.execute(
            "SELECT version, package_version, record FROM results WHERE name = ? AND mode = ?",
            (name, mode),
        ).fetchone()
        if row is None or row[0] != version or row[1] != package_version:
            return False
        try:
            config = json.loads(row[2]).get("config", {})
        except (json.JSONDecodeError, AttributeError):
            return False
        if not isinstance(config, dict):
            return False
        if seed is not None and config.get("seed") != seed:
            return False
        return device is None or config.get("device") == device

    def put(self, record: dict[str, Any]) -> None:
        """Insert or replace the record of ``(record['name'], record['mode'])`` atomically."""
        text = json.dumps(record, allow_nan=False)
        with self._con:
            self._con.execute(
                "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?)",
                (
                    record["name"],
                    record["mode"],
                    record["version"],
                    record["package_version"],
                    record["created_at"],
                    text,
                ),
            )

    def all(self, mode: str | None = None) -> list[dict[str, Any]]:
        if mode is None:
            rows = self._con.execute("SELECT record FROM results").fetchall()
        else:
            rows = self._con.execute(
                "SELECT record FROM results WHERE mode = ?", (mode,)
            ).fetchall()
        return [json.loads(r[0]) for r in rows]
