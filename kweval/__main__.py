"""`python -m kweval` is the `kweval` command.

`evaluate --protocol pke|kpeval|meng` is tried first by the keyphrase module's
own small parser (kweval.cli.fast.fast_main): that command needs neither
pandas nor numpy, and the full CLI's parser imports both.
"""

import sys

from kweval.cli.fast import fast_main


def main() -> None:
    status = fast_main(sys.argv[1:])
    if status is not None:
        sys.exit(status)
    from kweval.cli.dispatch import run

    run()


if __name__ == "__main__":
    main()
