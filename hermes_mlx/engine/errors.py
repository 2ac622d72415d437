"""One exception family for everything the engine refuses, each saying what was wrong."""


class EngineError(Exception):
    """Base of every error the engine raises on purpose."""


class ModelNotFound(EngineError):
    pass


class ChecksumMismatch(EngineError):
    pass


class UnsupportedModel(EngineError):
    pass


class CorruptModel(EngineError):
    pass


class InvalidRequest(EngineError, ValueError):
    pass


class PromptTooLong(InvalidRequest):
    pass


class DeadlineExceeded(EngineError, TimeoutError):
    pass


class EngineStopped(EngineError):
    pass
