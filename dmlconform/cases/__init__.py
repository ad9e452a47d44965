"""Cases: the case model, the generator and the on-disk case format."""
