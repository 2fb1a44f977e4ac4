"""The HTTP endpoints, one module per room: :mod:`.translate` (``POST /translate``),
:mod:`.attention` (``POST /attention``), :mod:`.info` (``GET /health``, ``/models``,
``/metrics``) and :mod:`.page` (the web page and the API docs). Each is thin: it checks what the
request asks against the served model, hands the model work to the model's batcher through
:meth:`~anuvad.server.state.ServerState.model_work` and shapes the answer."""
