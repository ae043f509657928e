# Build the Windows bundle, OUT_DIR\quarry\quarry.exe, and, when Inno Setup 6 is installed, its installer,
# OUT_DIR\QuarrySetup-VERSION.exe. Needs only Python 3.10+ (64-bit): Quarry and PyInstaller are installed
# from PyPI into a throwaway virtualenv, as installer/build.sh does on Linux and macOS.
#   powershell -ExecutionPolicy Bypass -File installer\windows\build.ps1 -OutDir dist [-Python "py -3.11"]
param(
    [Parameter(Mandatory = $true)][string]$OutDir,
    [string]$Python = "python"
)
$ErrorActionPreference = "Stop"
$started = Get-Date

function Invoke-Checked([string]$Exe, [string[]]$Arguments) {
    & $Exe @Arguments
    if ($LASTEXITCODE -ne 0) { throw "$Exe $($Arguments -join ' ') failed with exit code $LASTEXITCODE" }
}

$repo = (Resolve-Path "$PSScriptRoot\..\..").Path
New-Item -ItemType Directory -Force $OutDir | Out-Null
$out = (Resolve-Path $OutDir).Path
$work = Join-Path ([IO.Path]::GetTempPath()) ("quarry-build-" + [guid]::NewGuid())
New-Item -ItemType Directory "$work\src" | Out-Null
try {
    # Build Quarry from a copy of exactly what its package is made of (see build.sh for why).
    foreach ($item in "pyproject.toml", "README.md", "desktop_app", "resources") {
        Copy-Item -Recurse (Join-Path $repo $item) "$work\src"
    }
    $launcher = @($Python -split " ")
    Invoke-Checked $launcher[0] (@($launcher | Select-Object -Skip 1) + @("-m", "venv", "$work\venv"))
    $py = "$work\venv\Scripts\python.exe"
    Invoke-Checked $py @("-m", "pip", "install", "-q", "$work\src", "pyinstaller>=6.10,<7")

    Remove-Item -Recurse -Force -ErrorAction SilentlyContinue "$out\quarry"
    # From the work folder, so PyInstaller imports Quarry from the virtualenv and never from a checkout.
    Push-Location $work
    try {
        Invoke-Checked "$work\venv\Scripts\pyinstaller.exe" @("--noconfirm", "--log-level", "WARN", "--distpath", $out,
            "--workpath", "$work\build", "$repo\installer\quarry.spec")
    } finally { Pop-Location }
    Invoke-Checked "$out\quarry\quarry.exe" @("--help") | Out-Null
    Write-Host "built $out\quarry\quarry.exe in $([int]((Get-Date) - $started).TotalSeconds) s"

    $iscc = Get-Command iscc.exe -ErrorAction SilentlyContinue
    $isccPath = if ($iscc) { $iscc.Source } else { "${env:ProgramFiles(x86)}\Inno Setup 6\ISCC.exe" }
    if (Test-Path $isccPath) {
        $version = & $py -c "from importlib.metadata import version; print(version('quarry'))"
        Invoke-Checked $isccPath @("/Q", "/DAppVersion=$version", "/DBundleDir=$out\quarry", "/DOutDir=$out",
            "$PSScriptRoot\quarry.iss")
        Write-Host "built $out\QuarrySetup-$version.exe"
    } else {
        Write-Host "Inno Setup 6 not found: no installer built (winget install JRSoftware.InnoSetup)"
    }
} finally {
    Remove-Item -Recurse -Force -ErrorAction SilentlyContinue $work
}
