"""Derenderers: a word crop in, its pen trajectory out (the skeleton stand-in, the tracer and InkSight); ``factory``
holds the table of them, one row and card each."""
