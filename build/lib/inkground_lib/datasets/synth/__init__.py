"""Synthetic photographed pages of cursive: glyphs -> writers -> texts -> page layout -> photo -> dataset."""
