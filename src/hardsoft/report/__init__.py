"""Results store (SQLite) and the Markdown/HTML report rebuilt from it."""

from hardsoft.report.render import write_report
from hardsoft.report.store import ResultStore

__all__ = ["ResultStore", "write_report"]
