# The kweval dashboard, after https://docs.streamlit.io/deploy/tutorials/docker
#   docker build -t kweval .
#   docker run -p 8501:8501 -v kweval-home:/var/lib/kweval kweval                     # the embedded demo
#   docker run -p 8501:8501 -v kweval-home:/var/lib/kweval \
#              -v /path/to/Dataset:/data:ro -e KWEVAL_DATA=/data kweval                # your data
# The volume keeps kweval's files (KWEVAL_HOME: the embedding cache, the judgments, what is recorded) when the
# container is replaced.  `make image-check` (scripts/check_image.sh) builds the image and tries it in chromium.
ARG PYTHON_IMAGE=python:3.11-slim
FROM ${PYTHON_IMAGE}

# torch==2.13.0 is pinned in requirements.txt; the CPU index offers the CPU build (2.13.0+cpu),
# which pip prefers over the CUDA one.  Override with --build-arg PIP_EXTRA_INDEX_URL=... (or empty);
# PIP_FIND_LINKS names a folder of wheels, PIP_CERT a CA bundle for the indexes (empty: none).  Build arguments
# only: none of them is in the image.
ARG PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu
ARG PIP_FIND_LINKS=
ARG PIP_CERT=
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    STREAMLIT_SERVER_FILE_WATCHER_TYPE=none \
    KWEVAL_HOME=/var/lib/kweval

RUN useradd --create-home --uid 1000 kweval \
    && mkdir -p /var/lib/kweval && chown kweval:kweval /var/lib/kweval
WORKDIR /app

# The same two install steps as the Makefile (target $(VENV)/.runtime) and the README.
COPY requirements.txt pyproject.toml README.md ./
COPY kweval ./kweval
RUN pip install -r requirements.txt
RUN pip install --no-deps -e .

# What the server reads at run time (tests/test_packaging.py finds it by running every page): the app, its
# Streamlit settings, the pages, the dashboard package and the metric definitions the Summary shows.
COPY app.py ./
COPY .streamlit ./.streamlit
COPY pages ./pages
COPY dashboard ./dashboard
COPY docs ./docs

# The code stays root's (read-only to the server); the server writes only under KWEVAL_HOME, the volume.
USER kweval
VOLUME /var/lib/kweval
EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://localhost:8501/_stcore/health', timeout=4)"

ENTRYPOINT ["streamlit", "run", "app.py", "--server.address=0.0.0.0", "--server.port=8501", "--server.headless=true"]
