"""Search over a model's outputs: greedy and beam search, output limits and the generic
constraint hook (repetition blocking; the parse-tree constraint plugs in from
:mod:`anuvad.parsing`)."""
