"""What every stage is: a named object that reads and updates the question's State."""


class Stage:
    """A pipeline stage. `name` names its trace records; `group` is the switch that turns it off (see SWITCHES).

    run(state) updates the state and records what it did with `state.trace.step(...)`. A stage that cannot go on
    with the question calls state.stop(answer); an exception it lets escape stops the question too (the pipeline
    records it and answers "could not answer: ...").
    """
    name = ""
    group = None

    def run(self, state):
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}()"


def llm_params(config):
    return {"temperature": config.temperature}
