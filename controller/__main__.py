"""`python -m controller` does what the `crawler` command does."""
from controller.cli import main

if __name__ == "__main__":
    main()
