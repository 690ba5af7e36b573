"""Layer 3: the datasets: synthetic photographed pages and pages of real recorded words."""
