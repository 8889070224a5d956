"""Example programs written for hardsoft, shipped as package data: ``*.brasp`` (B-RASP) files
(docs/programs.md). Read them with :func:`hardsoft.programs.source.load_program`."""
