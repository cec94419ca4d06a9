#!/usr/bin/env python3
"""A Werkzeug (Flask's request layer) app on 127.0.0.1:9010 that says which method it served."""
from werkzeug.wrappers import Request, Response
from werkzeug.serving import run_simple

@Request.application
def app(request):
    if request.path.startswith("/pay") and request.method == "POST":
        return Response(f"PAYMENT TAKEN (method seen by the app: {request.method})\n")
    return Response(f"{request.method} {request.path}\n")

run_simple("127.0.0.1", 9010, app, threaded=True)
