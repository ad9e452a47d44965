"""The window family (issue #35): convolution (forward and transposed) and, in later steps, pooling and
fold/unfold: every output element reads a window of the input that a window map (`windowmap`) gives."""
