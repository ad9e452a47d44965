"""The normalization family (issue #36): MEAN_VARIANCE_NORMALIZATION1's statistics as reductions, then the element-wise step; docs/normalization.md."""
