import sys

from rankcheck.cli import main

if __name__ == "__main__":
    sys.exit(main())
