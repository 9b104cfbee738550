"""The MCP server's methods, independent of the transport: lifecycle, tools, resources and notifications.

    server = McpServer(toolbox)
    reply = server.handle(session, message, channel)   # a response dict, or None for notifications and responses

handle() never raises: malformed requests, unknown methods and failing tools all come back as JSON-RPC errors or
tool errors, so one bad message never stops the server.
"""
import logging
import traceback

from . import jsonrpc
from .session import ClientGone
from .tools import ToolError, error_content, result_content

# Newest first; the client's version is answered when it is one of these, else the newest.
PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")

INSTRUCTIONS = (
    "relmem serves a folder of SQLite databases read-only. Typical use: select_databases(question) to find which "
    "databases answer a question, describe_database for the schema, link_values/find_values to learn how the "
    "question's values are stored (e.g. 'Los Angeles' stored as 'LA'), check_sql before run_sql, or ask(question) "
    "for the whole pipeline.")

log = logging.getLogger("relmem.mcp")


class McpServer:
    def __init__(self, toolbox, name="relmem", version="0.1.0"):
        self.toolbox = toolbox
        self.info = {"name": name, "title": "relmem: SQLite databases as memory", "version": version}
        self._tools = {tool.name: tool for tool in toolbox.tools}
        self._methods = {
            "initialize": self._initialize,
            "ping": lambda session, params, call: {},
            "tools/list": self._list_tools,
            "tools/call": self._call_tool,
            "resources/list": self._list_resources,
            "resources/templates/list": self._list_resource_templates,
            "resources/read": self._read_resource,
        }

    def handle(self, session, message, channel):
        """Serves one decoded message. Requests get their response; notifications and the client's responses to
        our requests get None. A request cancelled meanwhile gets None too (the client no longer waits)."""
        if jsonrpc.is_response(message):
            if not session.accept_response(message):
                log.debug("dropping a response to unknown request %r", message.get("id"))
            return None
        if jsonrpc.is_notification(message):
            self._notify(session, message)
            return None
        call = session.begin(message["id"], channel)
        try:
            reply = self._answer(session, message, call)
        finally:
            session.end(call)
        return None if call.cancelled.is_set() else reply

    def _answer(self, session, message, call):
        method = self._methods.get(message["method"])
        try:
            if method is None:
                raise jsonrpc.RpcError(jsonrpc.METHOD_NOT_FOUND, f"method not found: {message['method']}")
            return jsonrpc.response(message["id"], method(session, message.get("params") or {}, call))
        except jsonrpc.RpcError as error:
            return jsonrpc.error_response(message["id"], error)
        except Exception as error:  # noqa: BLE001 - a bug in one method must not end the session
            log.error("internal error in %s: %s", message["method"], traceback.format_exc())
            return jsonrpc.error_response(message["id"], jsonrpc.RpcError(
                jsonrpc.INTERNAL_ERROR, f"internal error: {type(error).__name__}: {error}"))

    def _notify(self, session, message):
        params = message.get("params") or {}
        if message["method"] == "notifications/initialized":
            session.initialized = True
        elif message["method"] == "notifications/cancelled":
            session.cancel(params.get("requestId"))

    def _initialize(self, session, params, call):
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise jsonrpc.RpcError(jsonrpc.INVALID_PARAMS, "initialize needs params.protocolVersion (a string)")
        capabilities = params.get("capabilities")
        session.protocol_version = requested if requested in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0]
        session.client_capabilities = capabilities if isinstance(capabilities, dict) else {}
        session.client_info = params.get("clientInfo") if isinstance(params.get("clientInfo"), dict) else {}
        return {"protocolVersion": session.protocol_version,
                "capabilities": {"tools": {"listChanged": False},
                                 "resources": {"subscribe": False, "listChanged": False}},
                "serverInfo": self.info, "instructions": INSTRUCTIONS}

    def _list_tools(self, session, params, call):
        return {"tools": [tool.definition() for tool in self._tools.values()]}

    def _call_tool(self, session, params, call):
        name = params.get("name")
        tool = self._tools.get(name) if isinstance(name, str) else None
        if tool is None:
            raise jsonrpc.RpcError(jsonrpc.INVALID_PARAMS, f"unknown tool: {name!r} (tools: {', '.join(self._tools)})")
        arguments = params.get("arguments", {})
        if arguments is not None and not isinstance(arguments, dict):
            return error_content(f"invalid arguments for {name}: arguments must be an object")
        try:
            return result_content(tool.run(arguments, call))
        except ToolError as error:
            return error_content(str(error))
        except ClientGone as error:
            return error_content(f"{name} stopped: {error}")
        except Exception as error:  # noqa: BLE001 - the model gets the reason; the server keeps serving
            log.error("tool %s failed: %s", name, traceback.format_exc())
            return error_content(f"{name} failed: {type(error).__name__}: {error}")

    def _list_resources(self, session, params, call):
        return {"resources": self.toolbox.resources()}

    def _list_resource_templates(self, session, params, call):
        return {"resourceTemplates": self.toolbox.resource_templates()}

    def _read_resource(self, session, params, call):
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise jsonrpc.RpcError(jsonrpc.INVALID_PARAMS, "resources/read needs params.uri (a string)")
        contents = self.toolbox.read_resource(uri)
        if contents is None:
            raise jsonrpc.RpcError(jsonrpc.RESOURCE_NOT_FOUND, f"resource not found: {uri}", {"uri": uri})
        return {"contents": [contents]}
