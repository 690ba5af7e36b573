"""Layer 7, section 04: trade-offs and the paper's claims checked."""
