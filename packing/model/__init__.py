"""The model: what an instance is, and the rules every instance obeys however it was built.

Lives here: the instance and its parts (:mod:`~packing.model.instance`: host types, apps, rules,
placements, request streams), the instance-level checks every front door runs
(:mod:`~packing.model.validation`), node selection and topology over host labels
(:mod:`~packing.model.selection`, :mod:`~packing.model.topology`), Kubernetes quantities
(:mod:`~packing.model.quantity`), the inline host-type grammar (:mod:`~packing.model.host_spec`),
request-stream coverage and an instance's describing facts.

May import: packing.errors.
"""
