"""``python -m hardsoft.cli``: the same as the ``hardsoft`` command."""

from hardsoft.cli import main

main()
