"""The interpolation family (issue #36): RESAMPLE, RESAMPLE1, RESAMPLE2,
RESAMPLE3 and UPSAMPLE_2D, a coordinate map and weights in float64
(docs/interpolation.md)."""
