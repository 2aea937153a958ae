"""Closed-form models from the source documents (pure Python, no simulator needed).

- ``serialization``: the connection-serialization model of Osada et al.
  (``004_f48ce568b38e0ea9.txt`` §4 and Appendix A): T1, T2, Eq. (6), n_min, wnd_pkt,
  Q_max^TCP and the ideal mission complete time.
"""

from .serialization import SerializationModel, serialization_model

__all__ = ["SerializationModel", "serialization_model"]
