"""The ``anuvad`` command: one module per command group (parse → typed call → print)."""
