"""The results store: one SQLite file under the run folder, one row per experiment.

A row is *current* when its experiment version, mode (quick/full) and package version match;
``hardsoft reproduce`` skips current experiments, so an interrupted run resumes where it
stopped. SQLite commits are atomic: a crash never leaves a half-written record.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from hardsoft.errors import HardsoftError

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

    def is_current(self, name: str, mode: str, version: str, package_version: str) -> bool:
        row = self._con.execute(
            "SELECT version, package_version FROM results WHERE name = ? AND mode = ?",
            (name, mode),
        ).fetchone()
        return row is not None and row[0] == version and row[1] == package_version

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
