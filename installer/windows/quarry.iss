; Inno Setup 6 script: installs the one-folder Windows bundle for the current user (no administrator rights
; needed; an administrator may choose all users), with a Start menu entry and "Open with Quarry" on folders.
; installer\windows\build.ps1 compiles it as:
;   ISCC /DAppVersion=0.1.0 /DBundleDir=dist\quarry /DOutDir=dist installer\windows\quarry.iss

#ifndef AppVersion
  #error Pass /DAppVersion=X.Y.Z (and /DBundleDir, /DOutDir) to ISCC
#endif

[Setup]
AppId={{88E958B3-1C07-44FA-A4CD-5E9E28CC8A94}
AppName=Quarry
AppVersion={#AppVersion}
AppPublisher=Quarry
AppComments=Search a codebase by meaning and by name, offline
DefaultDirName={autopf}\Quarry
DefaultGroupName=Quarry
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
OutputDir={#OutDir}
OutputBaseFilename=QuarrySetup-{#AppVersion}
SetupIconFile=..\..\resources\icons\quarry.ico
UninstallDisplayIcon={app}\quarry.exe
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked
Name: "openwith"; Description: "Add ""Open with Quarry"" to the menu of folders in Explorer"

[Files]
Source: "{#BundleDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{group}\Quarry"; Filename: "{app}\quarry.exe"; Comment: "Search a codebase by meaning and by name"
Name: "{autodesktop}\Quarry"; Filename: "{app}\quarry.exe"; Tasks: desktopicon

[Registry]
; `quarry.exe FOLDER` opens the folder as the project, as on Linux ("Open with Quarry", Exec=quarry %F).
Root: HKA; Subkey: "Software\Classes\Directory\shell\Quarry"; ValueType: string; ValueName: ""; ValueData: "Open with Quarry"; Flags: uninsdeletekey; Tasks: openwith
Root: HKA; Subkey: "Software\Classes\Directory\shell\Quarry"; ValueType: string; ValueName: "Icon"; ValueData: "{app}\quarry.exe"; Tasks: openwith
Root: HKA; Subkey: "Software\Classes\Directory\shell\Quarry\command"; ValueType: string; ValueName: ""; ValueData: """{app}\quarry.exe"" ""%1"""; Tasks: openwith

[Run]
Filename: "{app}\quarry.exe"; Description: "{cm:LaunchProgram,Quarry}"; Flags: nowait postinstall skipifsilent
