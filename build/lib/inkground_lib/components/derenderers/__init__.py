"""Derenderers: a word crop in, its pen trajectory out (the skeleton stand-in and InkSight)."""
