"""Layer 8: what the book shows: tables, figures and generated pages per section (formatting only)."""
