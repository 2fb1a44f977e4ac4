"""The browser export (issue 42): ``anuvad export --format web`` writes the model as ONNX graphs
with a JavaScript runtime (``static/``) that translates in a page with no server, as the torch
engine does: :mod:`~anuvad.web.export` (the command), :mod:`~anuvad.web.onnx_export` (the
graphs), :mod:`~anuvad.web.onnx_check` (graphs vs torch), :mod:`~anuvad.web.settings`
(``model.json``, unsupported options), :mod:`~anuvad.web.vendor` (the npm packages copied in),
:mod:`~anuvad.web.node_check` (the runtime under Node, for tests and benchmarks).
"""
