"""Rating defaults, defined once: Elo's K and start rating (also the fitted pool's average), and
the bootstrap's sample count. Light to import (no numpy), so configs can use them."""

DEFAULT_RATING = 1500.0
DEFAULT_K = 32.0
DEFAULT_SAMPLES = 200
