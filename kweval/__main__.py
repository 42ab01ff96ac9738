"""`python -m kweval` is the `kweval` command."""

from kweval.cli import main

raise SystemExit(main())
