"""`python -m kweval` is the `kweval` command."""

from kweval.cli import run

run()
