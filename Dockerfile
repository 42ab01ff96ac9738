# The kweval dashboard, after https://docs.streamlit.io/deploy/tutorials/docker
#   docker build -t kweval .
#   docker run -p 8501:8501 kweval                                   # the embedded demo
#   docker run -p 8501:8501 -v /path/to/Dataset:/data -e KWEVAL_DATA=/data kweval
FROM python:3.11-slim

# torch==2.13.0 is pinned in requirements.txt; the CPU index offers the CPU build (2.13.0+cpu),
# which pip prefers over the CUDA one.  Override with --build-arg PIP_EXTRA_INDEX_URL=... (or empty).
ARG PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu
ENV PIP_EXTRA_INDEX_URL=${PIP_EXTRA_INDEX_URL} \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    STREAMLIT_SERVER_FILE_WATCHER_TYPE=none

RUN useradd --create-home --uid 1000 kweval
WORKDIR /app

# The same two install steps as the Makefile (target $(VENV)/.runtime) and the README.
COPY requirements.txt pyproject.toml README.md ./
COPY kweval ./kweval
RUN pip install -r requirements.txt
RUN pip install --no-deps -e .

COPY app.py ./
COPY dashboard ./dashboard
COPY .streamlit ./.streamlit
RUN chown -R kweval:kweval /app

USER kweval
EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://localhost:8501/_stcore/health', timeout=4)"

ENTRYPOINT ["streamlit", "run", "app.py", "--server.address=0.0.0.0", "--server.port=8501", "--server.headless=true"]
