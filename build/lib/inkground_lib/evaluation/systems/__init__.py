"""The systems that trace a word: API models, local baselines, derenderers, replay; and their registry."""
