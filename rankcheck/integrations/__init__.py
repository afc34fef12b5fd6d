"""The long-running integrations: the language server and the `--daemon` background process."""
