"""What operators, balancers and editors read: health and readiness (``routes_health``),
Prometheus metrics shared by the workers (``metrics``), the JSON access log (``access_log``), the
middleware that feeds both (``observe``), the questions asked of ask.json (``question_log``) and
the batched appends both logs write with (``batched_lines``)."""
