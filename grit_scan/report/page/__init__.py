"""`grit report`: a sweep (or scan reports) as a page to look at.

``model`` turns the JSON objects of a sweep into frozen records and counts
(outcomes, findings by kind and code, conventions and grades, a diff against
a baseline sweep); ``html`` renders them as one self-contained HTML page
(inline CSS, SVG charts and a little JavaScript, from the templates in
``templates/``); ``markdown`` renders a summary that pastes into an issue.
Nothing here reads a file the caller names: the command reads the inputs.
"""
