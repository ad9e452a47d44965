"""The interpolation family (issue #36): RESAMPLE, RESAMPLE1, RESAMPLE2 and
RESAMPLE3, a coordinate map and weights in float64 (docs/interpolation.md)."""
