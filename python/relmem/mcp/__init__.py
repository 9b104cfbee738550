"""relmem as tools for any agent: an MCP server (stdio and Streamable HTTP) and function-calling definitions.

    toolbox = Toolbox.open("dbs/", memory="memdir/")
    serve_stdio(McpServer(toolbox))                        # what `relmem serve --dbs dbs/ --memory memdir/` runs
    function_definitions(toolbox.tools, "openai"); dispatch(toolbox, tool_call)
"""
from .function_calling import dispatch, function_definitions
from .http import HttpServer
from .server import McpServer
from .stdio import serve_stdio
from .toolbox import Toolbox
from .tools import Tool, ToolError

__all__ = ["HttpServer", "McpServer", "Tool", "ToolError", "Toolbox", "dispatch", "function_definitions",
           "serve_stdio"]
