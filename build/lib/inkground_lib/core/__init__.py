"""Layer 1, the base every stage uses: inks, files, datasets, rendering, run-folder paths, defaults and the paper's numbers."""
