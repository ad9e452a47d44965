"""CONVOLUTION's FusedActivation: which activations its cases fuse, and the
attribute read (issue #35 item 3; docs/window.md "FusedActivation").

The CONVOLUTION page points to "Using fused operators to improve
performance" (reference/windows-ai-docs/dml-fused-activations.md), whose
list of activations supported for fusion is `FUSED`: every one, each with
attributes inside the range where it is monotone (the composition of
`families.contraction.fused` bounds through the two ends of the
convolution's interval).  GELU is not monotone; its one minimum is smooth,
so over an interval around it the end farther from the minimum moves
further from the centre's value than the minimum does (docs/window.md):
the same two ends still bound it.  The text of the attribute is read by the
contraction family's `parse_activation`, the one parser of the two families.
"""

from __future__ import annotations

from dmlconform.cases.model import Case
from dmlconform.families.contraction.cases import Activation, parse_activation
from dmlconform.families.window.semantics import Window

#: The fused activations of the cases (id tag, the FusedActivation attribute's text), the fused-activation
#: page's list in its order.
FUSED = (("linear", "ACTIVATION_LINEAR(Alpha=-0.5,Beta=0.25)"), ("sigmoid", "ACTIVATION_SIGMOID"),
         ("hard-sigmoid", "ACTIVATION_HARD_SIGMOID(Alpha=0.75,Beta=0.5)"), ("tanh", "ACTIVATION_TANH"),
         ("scaled-tanh", "ACTIVATION_SCALED_TANH(Alpha=1.5,Beta=0.5)"), ("relu", "ACTIVATION_RELU"),
         ("leaky", "ACTIVATION_LEAKY_RELU(Alpha=0.125)"), ("thresholded", "ACTIVATION_THRESHOLDED_RELU(Alpha=0.25)"),
         ("elu", "ACTIVATION_ELU(Alpha=0.5)"), ("celu", "ACTIVATION_CELU(Alpha=0.5)"),
         ("scaled-elu", "ACTIVATION_SCALED_ELU(Alpha=1.5,Gamma=1.25)"), ("softplus", "ACTIVATION_SOFTPLUS(Steepness=2)"),
         ("parametric-softplus", "ACTIVATION_PARAMETRIC_SOFTPLUS(Alpha=0.5,Beta=2)"),
         ("softsign", "ACTIVATION_SOFTSIGN"), ("identity", "ACTIVATION_IDENTITY"),
         ("shrink", "ACTIVATION_SHRINK(Bias=0.125,Threshold=0.25)"), ("gelu", "ACTIVATION_GELU"),
         ("clip", "ELEMENT_WISE_CLIP(Min=-0.5,Max=0.5)"))
#: The activations the window oracle composes: the page's list.
COMPOSED = tuple(sorted({text.split("(")[0] for _, text in FUSED}))


def activation(sem: Window, case: Case) -> Activation | None:
    """The fused activation ``case`` gives (None: none); ValueError for a text that is none of `COMPOSED`."""
    name = sem.fused_activation
    if not name:
        return None
    return parse_activation(name, case.attribute_map().get(name), COMPOSED, "window", "the fusable ones")
