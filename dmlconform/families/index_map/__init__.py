"""The index-map family (issue #34): operators whose every output element is one input element (GATHER, GATHER_ELEMENTS, GATHER_ND, GATHER_ND1 so far), compared bit for bit; docs/index-map.md."""
