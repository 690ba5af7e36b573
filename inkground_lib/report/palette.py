"""The book's colours: the Okabe-Ito colour-blind-safe palette and the role each colour plays in every
figure (a prediction, the reference it is scored against, the writer's true pen path).

Okabe, M. and Ito, K., "Color Universal Design" (2008): blue, vermillion, bluish green, reddish purple,
orange, sky blue, yellow, black, distinguishable under the common colour-vision deficiencies.
"""

OKABE_ITO = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000")

PREDICTION = "#D55E00"  # vermillion, solid: what a system drew
REFERENCE = "#0072B2"  # blue, dashed: the reference it is scored against (a pseudo-label or a recorded path)
TRUTH = "#009E73"  # bluish green, dashed: the writer's true pen path (synthetic and recorded pages)
PEN_UP = "#555555"  # faint: pen-up moves between strokes
