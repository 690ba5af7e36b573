"""Layer 9, the top: the papermill runner, make book, the CLI and the Sphinx extension."""
