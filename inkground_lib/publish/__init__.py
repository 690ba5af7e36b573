"""Publishing the book: the papermill runner, make book, make clean and the Sphinx extension."""
