"""Pipelines that chain the stages end to end outside the book: the paper-scale run."""
