"""``incastlab monitor``: find microbursts and incast timeouts on a host.

The native sampler (``crates/monitor``) polls an interface's counters every ~100 us; this
package turns its intervals into per-second rates at several timescales, reads TCP and
qdisc counters, and judges whether what it saw looks like incast. Source: the operator's
story in ``003_a133663d5dbcfa75.txt``. See ``docs/monitor.md``.
"""


def native():
    """The compiled extension, or an OSError that says how to build it."""
    try:
        from .. import _native
    except ImportError as e:
        raise OSError(f"the native extension is not built ({e}); run pip install -e . in the repository") from None
    return _native
