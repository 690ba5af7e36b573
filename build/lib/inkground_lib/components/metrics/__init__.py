"""The paper's metrics: trajectory fidelity (DTW, Chamfer) and readability (AR, CR)."""
