"""What every family's oracle shares: the protocol the judge talks to
(`oracles.base.FamilyOracle`, `BatchExpectation`, `Expectation`), the
reading markers, and the accumulation bounds of sums (DESIGN, accumulation
tolerances).  The families themselves are `dmlconform.families`."""
