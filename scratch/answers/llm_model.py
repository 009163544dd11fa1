"""The user's own model through the ``llm`` library (the ``llm`` extra), for model summaries.

``llm`` keeps the user's models, keys and default model (``llm models default``, ``llm keys
set``) and its plugins bring local models; scratch uses ``summarize.llm_model`` when it is set,
else llm's default model. Nothing here runs unless a model summary is asked for.

Invariants:
- ``llm`` is imported only by :func:`llm_model`; without it installed, or with no model that
  can answer (an unknown name, a model that needs a key and has none), the answer is an
  :class:`~scratch.answers.model_summary.Unavailable` with its next step, never an exception.
- A call that fails (the provider refused it, the network is down) raises
  ``summary_model_failed`` with llm's own message; nothing is cached (the caller writes only a
  finished summary).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from scratch.answers.model_summary import Prompt, Unavailable, Written
from scratch.errors import ScratchError

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context

NO_MODEL = "no_summary_model"


class LlmModel:
    """One llm model, with its key when it needs one."""

    source = "llm"

    def __init__(self, model: object, key: str | None) -> None:
        self.model = model
        self.key = key
        self.model_id = str(getattr(model, "model_id", "") or type(model).__name__)

    def __repr__(self) -> str:
        return f"LlmModel({self.model_id!r})"

    def expected_model(self) -> str:
        return self.model_id

    def write(self, prompts: Sequence[Prompt]) -> list[Written]:
        out = []
        for prompt in prompts:
            extra = {"key": self.key} if self.key is not None else {}
            try:
                response = self.model.prompt(  # type: ignore[attr-defined]
                    prompt.text, system=prompt.system, stream=False, **extra)
                text = str(response.text())
            except Exception as exc:  # llm's and its plugins' errors have no common base
                raise ScratchError(
                    f"llm model {self.model_id!r} failed: {type(exc).__name__}: {exc}"[:500],
                    code="summary_model_failed", model=self.model_id) from None
            out.append(Written(text, self.model_id))
        return out


def llm_model(ctx: Context) -> LlmModel | Unavailable:
    """The model llm would answer with (``summarize.llm_model``, else llm's default), or why
    there is none."""
    from scratch import __distribution__
    try:
        import llm
    except ImportError:
        return Unavailable(NO_MODEL, "the llm library is not installed and no MCP client "
                           "offered its model (sampling)",
                           f"pip install '{__distribution__}[llm]' (or pipx inject "
                           f"{__distribution__} llm), then llm models default MODEL")
    name = ctx.config["summarize.llm_model"] or None
    try:
        model = llm.get_model(name)
    except llm.UnknownModelError:
        return Unavailable(NO_MODEL, f"llm knows no model {name!r} (summarize.llm_model)",
                           "llm models list shows the models llm has; set summarize.llm_model "
                           "to one of them")
    except Exception as exc:  # a broken llm configuration
        return Unavailable(NO_MODEL, f"llm has no usable model: {type(exc).__name__}: {exc}",
                           "llm models default MODEL")
    key = None
    needs = getattr(model, "needs_key", None)
    if needs:
        key = llm.get_key(None, needs, getattr(model, "key_env_var", None))
        if not key:
            which = "summarize.llm_model" if name else "llm's default model"
            return Unavailable(NO_MODEL, f"{which} {model.model_id!r} needs a key "
                               f"({needs!r}) and none is set",
                               f"llm keys set {needs}, or choose a model that needs none "
                               "(llm models default MODEL, or summarize.llm_model)")
    return LlmModel(model, key)
