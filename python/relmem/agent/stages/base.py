"""What every stage is: a named object that reads and updates the question's State."""


class Stage:
    """A pipeline stage. `name` names it: its trace records and the LLM calls it makes carry this name (the LLM
    layer passes it on as X-Relmem-Stage). `group` is the switch that turns it off (see SWITCHES).

    `reads` and `writes` declare the State fields it uses and changes ("targets.<field>" for a field of each
    QueryTarget; "targets" stands for all of them). The pipeline refuses a stage whose reads neither State.INPUTS
    nor an earlier stage's writes provide; `optional_reads` are used when an earlier stage wrote them.

    run(state) updates the state and records what it did with `state.trace.step(...)`. A stage that cannot go on
    with the question calls state.stop(answer); an exception it lets escape stops the question too (the pipeline
    records it and answers "could not answer: ...").
    """
    name = ""
    group = None
    reads = ()
    optional_reads = ()
    writes = ()

    def run(self, state):
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}()"


def llm_params(config):
    return {"temperature": config.temperature}
